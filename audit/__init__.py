"""The quality audit of a Lean formalization: proof gap, statistics, semantic faithfulness, cross-file reuse."""
