"""The scheduler process: drivers around ``xce.core`` (simulation mode here, normal mode elsewhere)."""
