"""Tests of the cluster layer: builders, values, schemas, alerts and the AscendCluster component."""
