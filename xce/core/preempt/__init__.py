"""Preemption by suspension: victim selection policies and their registry."""
