"""The benchmark application: the verbs a run's workflow calls (plan, check, report), trial
preparation, pull, and the command tools the local driver runs. The engine never imports it.

Its rooms, and the one way their imports go (tests/unit/test_layers.py holds it):
  team/, records/, trials/   import no other room
  agents/, tryout/           may import trials/
  host.py, run.py            compose the rooms; no room imports them
"""
