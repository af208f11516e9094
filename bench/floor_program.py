"""The SDK floor: a program that registers N bare custom resources and nothing else."""
import pulumi

count = pulumi.Config("floor").require_int("count")
for i in range(count):
    pulumi.CustomResource("floor:index:Bare", f"bare-{i}", {"index": i})
