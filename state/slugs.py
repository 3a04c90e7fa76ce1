"""Issue file names made from ids someone else chose (a book entity's, a declaration's): readable, in the issues'
slug alphabet (`gates.issues.SLUG`), and never one file for two ids.

The readable part lower-cases the id and joins what lies outside the alphabet with `-`, which can make two ids one
(`Theorem 2.1A` and `Theorem 2.1a`, `thm:2.1` and `thm-2.1`): wherever it loses anything of the id, or is cut to
length, a short digest of the id follows it. Names written before the digest existed (`legacy`) are read only to
find an issue written then.
"""

from __future__ import annotations

import hashlib
import re

OUTSIDE = re.compile(r"[^a-z0-9._-]+")
LIMIT = 81  # characters of a slug
MARK = 8  # hex digits of the digest
DIGESTED = re.compile(rf"-[0-9a-f]{{{MARK}}}$")


def slug(prefix: str, ident: str, fallback: str) -> str:
    """`prefix` and `ident` as a slug (`fallback` stands for an id with nothing readable in it)."""
    base = OUTSIDE.sub("-", ident.lower()).strip("-.") or fallback
    # Kept as it is only when nothing is lost, and it could not be another id's name with its digest.
    if base == ident and len(prefix + base) <= LIMIT and not DIGESTED.search(base):
        return prefix + base
    mark = "-" + hashlib.sha256(ident.encode()).hexdigest()[:MARK]
    return (prefix + base)[:LIMIT - len(mark)].rstrip("-.") + mark


def legacy(prefix: str, ident: str, fallback: str, limit: int | None) -> str:
    """The name `slug` gave before it added the digest (cut to `limit` where it was cut)."""
    name = prefix + (OUTSIDE.sub("-", ident.lower()).strip("-.") or fallback)
    return name if limit is None else name[:limit].rstrip("-.")
