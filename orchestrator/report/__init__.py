"""The static HTML dashboard of a run (`autoformalize report --out DIR`)."""

from orchestrator.report.site import build

__all__ = ["build"]
