"""What the endpoint says about its models (`GET /v1/models`, `GET /v1/models/{id}`), kept on disk.

The window, output cap and capabilities of every model come from the endpoint's answer when it
has given one; prices only from the built-in table (agent_repl.core.api.models), since the API has
none. Answers are kept per endpoint in `<home>/cache/models-<digest>.json`, so a later start
knows them without asking; an answer older than `MAX_AGE` is still used, and the session asks
again in the background (agent_repl.session). Nothing here touches the network.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agent_repl.core.api.models import ModelInfo, known_model_info, unknown_model_info
from agent_repl.core.tooling.atomic import write_atomic
from agent_repl.core.tooling.persisted_output import ensure_private_dir

# How long an answer is taken as current; after that it is used until a fresh one arrives.
MAX_AGE = timedelta(hours=24)
# A cache file no session has written for this long belongs to an endpoint no longer used.
FORGET_AFTER = timedelta(days=30)
# The endpoint requests go to when no base URL is set.
DEFAULT_ENDPOINT = "https://api.anthropic.com"
# The capability our emulator advertises for its cache-editing beta (not in the public API).
CACHE_EDITS_CAPABILITY = "cache_edits_agent_repl"
_CACHE_VERSION = 1


def cache_file(home: Path, base_url: str | None) -> Path:
    """Where the answers of one endpoint are kept (one file per endpoint)."""
    endpoint = (base_url or DEFAULT_ENDPOINT).rstrip("/")
    digest = hashlib.sha256(endpoint.encode()).hexdigest()[:16]
    return home / "cache" / f"models-{digest}.json"


def info_from_api(data: Mapping[str, Any], base: ModelInfo, *, thinking_default_known: bool) -> ModelInfo:
    """`base` with the window, output cap and capabilities of a `GET /v1/models/{id}` body.

    Prices stay `base`'s (the API has none). Capabilities cannot say whether a model thinks by
    default, so a table model keeps the table's word; for another, only a model that cannot turn
    thinking off surely thinks."""
    capabilities = data.get("capabilities") or {}
    thinking_types = ((capabilities.get("thinking") or {}).get("types")) or {}
    supported = {name for name, flag in thinking_types.items() if (flag or {}).get("supported")}
    compaction = (capabilities.get("compaction") or {}).get("summarize") or {}
    thinks = base.thinking_default_on
    if not thinking_default_known and thinking_types:
        thinks = bool(supported - {"disabled", "between_tools"}) and "disabled" not in supported
    return dataclasses.replace(
        base,
        context_window=_positive(data.get("max_input_tokens")) or base.context_window,
        max_output_tokens=_positive(data.get("max_tokens")) or base.max_output_tokens,
        thinking_default_on=thinks,
        on_demand_compaction=bool(compaction.get("supported"))
        if "compaction" in capabilities
        else base.on_demand_compaction,
    )


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


@dataclass
class Answer:
    data: dict[str, Any]
    fetched_at: datetime


@dataclass
class ModelCatalog:
    """The table plus what one endpoint said about its models, on disk when `path` is set."""

    path: Path | None = None
    answers: dict[str, Answer] = field(default_factory=dict)
    # A cache file that could not be read or written (the session works on without it).
    problem: str | None = None

    @classmethod
    def on_disk(cls, home: Path, base_url: str | None) -> ModelCatalog:
        """The catalog of this endpoint, with the answers an earlier session kept."""
        catalog = cls(path=cache_file(home, base_url))
        catalog.load()
        return catalog

    def info(self, model: str) -> ModelInfo:
        table = known_model_info(model)
        answer = self.answers.get(model)
        base = table or unknown_model_info(model)
        if answer is None:
            return base
        return info_from_api(answer.data, base, thinking_default_known=table is not None)

    def knows(self, model: str) -> bool:
        """Whether the endpoint has answered for this model (now or in an earlier session)."""
        return model in self.answers

    def is_fresh(self, model: str, now: datetime) -> bool:
        answer = self.answers.get(model)
        return answer is not None and now - answer.fetched_at < MAX_AGE

    def supports_cache_editing(self, model: str) -> bool:
        """Whether the endpoint advertised our cache-editing beta for `model`."""
        answer = self.answers.get(model)
        capabilities = (answer.data if answer else {}).get("capabilities") or {}
        context_management = capabilities.get("context_management") or {}
        return bool((context_management.get(CACHE_EDITS_CAPABILITY) or {}).get("supported"))

    def remember(self, answers: Mapping[str, Mapping[str, Any]], now: datetime) -> bool:
        """Keep the endpoint's answers (model id -> ModelInfo body) and write them down; whether
        any model's facts changed."""
        changed = False
        for model, data in answers.items():
            before = self.info(model)
            self.answers[model] = Answer(dict(data), now)
            changed = changed or self.info(model) != before
        self.save()
        return changed

    def load(self) -> None:
        if self.path is None or not self.path.is_file():
            return
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            models = raw["models"] if raw.get("version") == _CACHE_VERSION else {}
            for model, entry in models.items():
                fetched = datetime.fromisoformat(entry["fetched_at"])
                if fetched.tzinfo is None:
                    fetched = fetched.replace(tzinfo=UTC)
                if isinstance(entry.get("data"), dict):
                    self.answers[str(model)] = Answer(entry["data"], fetched)
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            # A damaged cache is asked again, never trusted in part.
            self.answers.clear()
            self.problem = f"model cache {self.path} unreadable ({exc}); asking the endpoint again"

    def save(self) -> None:
        if self.path is None:
            return
        models = {
            model: {"fetched_at": answer.fetched_at.isoformat(), "data": answer.data}
            for model, answer in self.answers.items()
        }
        payload = json.dumps({"version": _CACHE_VERSION, "models": models}, indent=1, sort_keys=True)
        try:
            ensure_private_dir(self.path.parent)  # in the agent's home, private like the rest of it
            write_atomic(self.path, payload.encode(), 0o600)
        except OSError as exc:
            self.problem = f"model cache {self.path} not written ({exc.strerror or exc})"
            return
        self._forget_old_endpoints()

    def _forget_old_endpoints(self) -> None:
        """Drop the files of endpoints not asked for a month (a local emulator gets a new port, and
        so a new file, every time it starts)."""
        assert self.path is not None
        cutoff = time.time() - FORGET_AFTER.total_seconds()
        for other in self.path.parent.glob("models-*.json"):
            try:
                if other != self.path and other.stat().st_mtime < cutoff:
                    other.unlink()
            except OSError:
                continue  # another process's file, or gone already
