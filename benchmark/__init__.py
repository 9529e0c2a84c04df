"""The benchmark application: the verbs a run's workflow calls (plan, check, report), trial
preparation, pull, and the command tools the local driver runs. The engine never imports it."""
