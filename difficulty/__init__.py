"""How hard each open target is, and when the book will be done: a difficulty model fitted on the loop's attempts.

`attempts` reads them from the history, `priors` places each target in its groups from the tree, `irt` fits
σ(θ_m − b_i) (or `paper` the psychometric paper's formulas), `estimate` composes them, `simulate` plays the rest
of the run forward and `forecast` is the document `autoformalize forecast` prints. Pure Python, no import of a
model SDK: `status`, the dashboard and every cycle's Planner context use it.
"""
