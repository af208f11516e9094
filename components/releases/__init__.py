"""The release catalog: what each pinned release of a Huawei component defines and writes, with its source."""
