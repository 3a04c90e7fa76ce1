"""Model backends: one module per provider, each a class matching `agents.model.Model`."""
