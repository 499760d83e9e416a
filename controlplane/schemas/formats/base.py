"""What every schema format provides: parsing into a canonical form, and a reader/writer compatibility check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class InvalidSchema(Exception):
    """The schema text is not a valid schema of its type; the message is the parser's reason."""


@dataclass(frozen=True)
class ParsedSchema:
    schema_type: str
    # The stored form: identical schemas have identical canonical text.
    canonical: str
    # The form stored when the client asks to `normalize`: names fully qualified, layout fixed.
    normalized: str
    # The format's own parsed representation, used by its compatibility rules.
    model: Any = field(compare=False, repr=False)


@dataclass(frozen=True)
class Incompatibility:
    """One broken rule: a Confluent-style error type, where it broke and a sentence saying what broke."""

    error_type: str
    path: str
    description: str

    def __str__(self) -> str:
        return f"{{errorType:'{self.error_type}', description:'{self.description}', path:'{self.path}'}}"
