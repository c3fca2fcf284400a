"""A fake asz plugin used by asz's own tests. See plugin.py for the switches it reads."""
