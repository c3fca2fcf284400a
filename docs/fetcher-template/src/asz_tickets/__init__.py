"""asz source fetcher for a ticket system's API (a template: docs/writing-plugins.md)."""
