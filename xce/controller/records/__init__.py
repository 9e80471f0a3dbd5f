"""What the cluster remembers and reports: accounting, fair-share standing, pools, metrics, status."""
