"""Plugins asz_core registers in-process, through the same hooks any plugin uses.

Nothing here yet: the local-file source fetcher and the scripted evaluator arrive with the
stages that use them.
"""
