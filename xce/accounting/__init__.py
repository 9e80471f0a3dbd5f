"""What jobs declared against what they were measured to use, after they ended."""
