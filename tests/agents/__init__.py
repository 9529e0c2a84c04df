"""Tests against the real agent CLIs, driven by a scripted mock model on 127.0.0.1."""
