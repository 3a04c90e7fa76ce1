"""Lean source analysis (lexer, declaration index, census) and the mechanical gates."""
