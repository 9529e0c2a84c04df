"""Tasks from the team's own history: `armbench task new --from-commit` and `task harvest`.

May import `benchmark.trials` and `benchmark.tryout` (a draft is tried as `armbench try` tries a
file), and `benchmark.team` (a pulled suite's suite.yaml)."""
