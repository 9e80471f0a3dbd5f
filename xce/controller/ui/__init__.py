"""The web dashboard at ``/ui/``: server-rendered pages (Jinja2) over the same view and permission
functions as the REST API, a little JavaScript that refreshes each page in place, and every asset
shipped in the package (nothing is fetched from anywhere but the controller)."""
