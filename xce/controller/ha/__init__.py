"""High availability: which of several controllers leads, and what a follower answers."""
