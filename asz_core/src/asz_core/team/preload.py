"""Imported by the forkserver a worker forks its runs from (:func:`.jobs.spawner`): asz, its
plugins, the kit and the price file read once, so no run starts cold (:func:`.runjob.warm`)."""

from .runjob import warm

warm()
