"""The four roles, their prompts, context assembly and model backends."""
