"""Tasks from the team's own history: `armbench task new --from-commit`, `--from-session` and
`task harvest`.

May import `benchmark.trials` and `benchmark.tryout` (a draft is tried as `armbench try` tries a
file), `benchmark.team` (a pulled suite's suite.yaml) and `benchmark.agents` (`--prompt-tool`)."""
