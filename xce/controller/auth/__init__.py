"""Who is calling and what they may do: tokens, MUNGE, roles."""
