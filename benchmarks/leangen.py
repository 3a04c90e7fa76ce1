"""Generate Lean-shaped source trees with a known census.

Every file mixes what the census must count (`sorry`, `admit` in proofs, a
`sorry` inside an interpolated string's braces) with what it must not (the word
in comments, nested block comments, doc comments, strings, raw strings,
identifiers such as `sorry_free`). The generator keeps its own tally, so a test
or benchmark can check the census against it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

_NOISE = [
    "  -- sorry, this step is slow\n",
    "  /- a nested /- block -/ with sorry inside -/\n",
    '  have hs : "sorry" ≠ "admit" := by decide\n',
    '  have hr : r#"quote " sorry"# = r#"quote " sorry"# := rfl\n',
    "  have hc : '\"' = '\"' := rfl\n",
    "  have h' : sorry_free = sorry_free := rfl\n",
    "  simp only [Nat.add_zero, foo.admit_lemma]\n",
]


@dataclass
class Tally:
    files: int = 0
    lines: int = 0
    sorries: int = 0
    admits: int = 0
    axioms: list[str] = field(default_factory=list)
    decls: int = 0
    per_decl: dict[str, int] = field(default_factory=dict)


def lean_file(module: str, n_decls: int, rng: random.Random, tally: Tally) -> str:
    """One file of `n_decls` declarations in namespace `module`."""
    out = [f"import Mathlib.Tactic\n\n/-! # {module}\n\nGenerated; mentions sorry in prose. -/\n\n",
           f"namespace {module}\n\nsection Work\nvariable {{α : Type}} [DecidableEq α]\n\n"]
    for i in range(n_decls):
        name = f"lemma_{i}"
        holes = 0
        body: list[str] = []
        for _ in range(rng.randint(3, 14)):
            r = rng.random()
            if r < 0.04:
                body.append("  sorry\n")
                tally.sorries += 1
                holes += 1
            elif r < 0.05:
                body.append("  admit\n")
                tally.admits += 1
                holes += 1
            elif r < 0.35:
                body.append(rng.choice(_NOISE))
            else:
                body.append(f"  rw [Finset.sum_range_succ, ih_{rng.randint(0, 99)}] at h{rng.randint(0, 9)} ⊢\n")
        out.append(f"/-- Statement {i} of {module}; proof may use sorry. -/\n")
        out.append(f"@[simp] private theorem {name} (n : ℕ) (h : n ≥ {i}) :\n"
                   "    ∑ k ∈ Finset.range n, k ≤ n ^ 2 := by\n")
        out.extend(body)
        out.append("\n")
        tally.decls += 1
        if holes:
            tally.per_decl[f"{module}.{name}"] = holes
        if i % 25 == 24:
            out.append(f'def msg_{i} : String := s!"{{sorry}} and {{"x"}}"\n\n')
            tally.sorries += 1
            tally.decls += 1
            tally.per_decl[f"{module}.msg_{i}"] = 1
    if rng.random() < 0.1:
        out.append(f"axiom choice_{tally.files} : ∀ p : Prop, p ∨ ¬p\n\n")
        tally.axioms.append(f"{module}.choice_{tally.files}")
        tally.decls += 1
    out.append(f"end Work\n\nend {module}\n")
    text = "".join(out)
    tally.files += 1
    tally.lines += text.count("\n")
    return text


def write_tree(root: Path, *, files: int, decls_per_file: int, seed: int = 0) -> Tally:
    """Write `files` Lean files under `root/Book/` and return their tally."""
    rng = random.Random(seed)
    tally = Tally()
    for n in range(files):
        chapter = root / "Book" / f"Chapter{n % 12}"
        chapter.mkdir(parents=True, exist_ok=True)
        module = f"Book.Chapter{n % 12}.Section{n}"
        (chapter / f"Section{n}.lean").write_text(lean_file(module, decls_per_file, rng, tally), encoding="utf-8")
    return tally


CHAIN_LAKEFILE = 'name = "book"\n[[lean_lib]]\nname = "Book"\n'


def write_chain(root: Path, bodies: list[list[str]]) -> None:
    """A Lake project whose library `Book` is a chain of files: `Book/F<i>.lean` imports the file before it (the
    first, Mathlib) and holds the lines `bodies[i]` inside `namespace Book`."""
    (root / "Book").mkdir(parents=True)
    (root / "lakefile.toml").write_text(CHAIN_LAKEFILE)
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.26.0\n")
    (root / "Book.lean").write_text("".join(f"import Book.F{i}\n" for i in range(len(bodies))))
    for i, body in enumerate(bodies):
        head = ["import Mathlib" if i == 0 else f"import Book.F{i - 1}", "", "namespace Book", ""]
        (root / "Book" / f"F{i}.lean").write_text("\n".join([*head, *body, "end Book"]) + "\n")
