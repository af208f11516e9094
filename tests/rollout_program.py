"""A Pulumi program for the tests: two trivial steps per node, waves gated by the rollout's own wiring."""
import pulumi

from components.host.rollout import gate_waves

config = pulumi.Config("rollout-test")
WAVES, PER_WAVE = config.require_int("waves"), config.require_int("perWave")


def build_wave(wave, after):
    gates = []
    for node in wave:
        first = pulumi.CustomResource("test:index:Step", f"{node}-first", {},
                                      opts=pulumi.ResourceOptions(depends_on=after))
        gates.append(pulumi.CustomResource("test:index:Step", f"{node}-verify", {},
                                           opts=pulumi.ResourceOptions(depends_on=[first])))
    return gates


def close_wave(index, gates):
    return pulumi.CustomResource("test:index:Wave", f"w{index:04d}", {}, opts=pulumi.ResourceOptions(depends_on=gates))


gate_waves([[f"w{w:04d}-n{i}" for i in range(PER_WAVE)] for w in range(WAVES)], build_wave, close_wave)
