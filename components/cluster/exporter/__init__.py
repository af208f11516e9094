"""The NPU exporter: its DaemonSets per container engine, its Service and who may reach it."""
