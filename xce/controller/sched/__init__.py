"""The scheduler's side: the feed it reads, the decisions it posts, the figures of its rounds."""
