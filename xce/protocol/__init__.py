"""What the controller and its workers say to each other, defined once for both ends.

It sits below the controller and the worker and imports neither (standard library and
:mod:`xce.jobfiles` only), so each end reads the same definition instead of its own idea of the
other's dicts.
"""
