"""The HTTP application around the controller: the app, request models and hygiene, and how records are shown."""
