"""The offline plan: the real program under Pulumi's mock engine, judged by the real policy pack."""
