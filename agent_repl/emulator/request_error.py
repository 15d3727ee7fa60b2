"""The one exception the engine raises for a request the API would refuse.

The server maps it to an HTTP error body: `{"type": "error", "error": {"type": error_type,
"message": message}, ...}` with `status`.
"""

from __future__ import annotations


class EmulatorRequestError(Exception):
    def __init__(self, message: str, *, status: int = 400, error_type: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type
