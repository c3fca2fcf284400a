"""The judge: a run over one conversation at one head, its stages, its close (docs/judge.md,
docs/architecture.md). Nothing is imported here: ``asz_core.judge.runner`` is the entry."""
