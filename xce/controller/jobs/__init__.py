"""A job's life in the controller: its state table, submission, gates and dependencies, what people do to it, and whether it could ever run."""
