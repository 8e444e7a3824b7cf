"""The one error type for bad input: it names the file, the line or record, and the field path."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input, located precisely enough for a user to fix it.

    Rendered as ``FILE[:LINE]: field.path: message`` (parts that are unknown are left out).
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 path: str | None = None) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.path = path
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = [p for p in (where, self.path) if p]
        return ": ".join([*parts, self.message])

    def located(self, *, file: str | None = None, line: int | None = None) -> InputError:
        """The same error with the file (and line) filled in where still unknown."""
        return InputError(self.message, file=self.file or file,
                          line=self.line if self.line is not None else line, path=self.path)
