"""The hosts: workers' registration, reports and liveness, the action queue, the slots each host holds."""
