"""Self-play runs: the roles (roles.py) and one orchestration (orchestration.py); the local runner
(one process) and the Ray runner (actors, local or a cluster) only place the same roles."""
