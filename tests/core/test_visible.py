from agent_repl.core.model.visible import show_controls


def test_escape_sequences_become_visible_symbols():
    shown = show_controls("ls -la; rm -f victim #\x1bcAllow Bash: ls -la")
    assert "\x1b" not in shown
    assert shown == "ls -la; rm -f victim #\u241bcAllow Bash: ls -la"
    assert show_controls("\x1b[2J\x07") == "\u241b[2J\u2407"


def test_newlines_and_tabs_stay_unless_asked():
    assert show_controls("a\tb\nc") == "a\tb\nc"
    assert show_controls("a\tb\nc", newlines=False, tabs=False) == "a\u2409b\u240ac"


def test_carriage_returns_cannot_overwrite_a_line():
    assert show_controls("one\r\ntwo") == "one\ntwo"
    assert show_controls("safe\rEVIL") == "safe\u240dEVIL"


def test_c1_controls_del_and_bidi_overrides_are_shown():
    assert show_controls("\x9b2J") == "\\x9b2J"
    assert show_controls("a\x7fb") == "a\u2421b"
    assert show_controls("abc\u202edef") == "abc<U+202E>def"


def test_plain_text_is_unchanged():
    text = "héllo wörld — 日本語 ✓"
    assert show_controls(text) == text
