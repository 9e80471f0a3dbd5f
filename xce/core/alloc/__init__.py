"""Allocation: a lazy plan iterator feeds a lazy host iterator at each primary request; compound
and alternative requests are composition rules above them (spec: Allocation Architecture)."""
