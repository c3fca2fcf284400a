"""Team scale: many judge runs at once on a job engine running on the team's PostgreSQL.

``asz judge --all`` enqueues one run per conversation at its current head (:mod:`.jobs`),
``asz worker`` runs them (each run complete on its own, written as a single run is), and each
run's summary lands in the team database (:mod:`.summaries`) so ``asz runs --team`` lists the
team's runs from any machine (:mod:`.team_report`). The engine is procrastinate
(docs/architecture.md says why); :mod:`.database` finds the team database and connects to it.
"""
