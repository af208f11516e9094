"""Monitoring of the exporter: Prometheus scrape config, alert rules and the Grafana dashboard."""
