#!/usr/bin/env python3
"""Writes libbudget/src/interop/bridge_fields_<bridge8>.tsv: every field of the dataclasses that
Megatron-Bridge's ConfigContainer.to_yaml() writes in the sections --bridge-config reads (docs/megatron.md,
"Megatron-Bridge configs"), with the file:line that declares it, read from the sources (Python's ast:
every annotated assignment in the class body and in its base classes, followed through imports).

Usage: scripts/bridge_fields.py BRIDGE_GIT_DIR MEGATRON_LM_GIT_DIR [OUT.tsv]
  BRIDGE_GIT_DIR at NVIDIA-NeMo/Megatron-Bridge@067f987d (its 3rdparty/Megatron-LM submodule pins
  NVIDIA/Megatron-LM@2a75ac12, whose megatron/core and megatron/training the base classes come from).

Each row: section, field, declaring class, file:line. The section "container" lists the
ConfigContainer's own fields (the YAML's top-level keys).
"""
import ast
import subprocess
import sys

BRIDGE_COMMIT = "067f987df03b8355b03192d88d70f1709fedf51a"
MEGATRON_COMMIT = "2a75ac12c54ba6a42b34024756820bf819a2e25f"

# section -> the classes to_yaml may write there (module, class)
SECTIONS = {
    "container": [("megatron.bridge.training.config", "ConfigContainer")],
    "model": [("megatron.bridge.models.gpt_provider", "GPTModelProvider")],
    "train": [("megatron.bridge.training.config", "TrainingConfig")],
    "optimizer": [("megatron.bridge.training.config", "OptimizerConfig")],
    "ddp": [("megatron.bridge.training.config", "DistributedDataParallelConfig")],
    "mixed_precision": [("megatron.bridge.training.mixed_precision", "MixedPrecisionConfig")],
    "comm_overlap": [("megatron.bridge.training.comm_overlap", "CommOverlapConfig")],
    "dataset": [("megatron.bridge.training.config", "GPTDatasetConfig"),
                ("megatron.bridge.training.config", "MockGPTDatasetConfig")],
}


class Sources:
    def __init__(self, bridge, megatron):
        self.bridge, self.megatron = bridge, megatron
        self.cache = {}

    def module(self, name):
        """(path, ast) of a module, or None when it is not in either repository."""
        if name in self.cache:
            return self.cache[name]
        rel = name.replace(".", "/")
        if name.startswith("megatron.bridge"):
            tries = [(self.bridge, BRIDGE_COMMIT, "src/" + rel)]
        else:
            tries = [(self.megatron, MEGATRON_COMMIT, rel)]
        found = None
        for git_dir, commit, stem in tries:
            for path in (stem + ".py", stem + "/__init__.py"):
                r = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
                                   capture_output=True, text=True)
                if r.returncode == 0:
                    found = (path, ast.parse(r.stdout))
                    break
            if found:
                break
        self.cache[name] = found
        return found

    @staticmethod
    def absolute(module, path, node):
        """The module an ImportFrom names, relative imports resolved against `module`."""
        if node.level == 0:
            return node.module
        package = module.split(".") if path.endswith("__init__.py") else module.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        return ".".join(package + ([node.module] if node.module else []))

    def resolve(self, module, name, depth=0):
        """(module, ClassDef) of `name` as seen from `module`, following imports."""
        found = self.module(module)
        if found is None or depth > 8:
            return None
        _, tree = found
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return module, node
        path = found[0]
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        return self.resolve(self.absolute(module, path, node), alias.name, depth + 1)
        return None

    def fields(self, module, name, seen=None):
        """[(field, class, file:line)] of a class and its bases, bases first."""
        seen = seen if seen is not None else set()
        hit = self.resolve(module, name)
        if hit is None or (hit[0], name) in seen:
            return []
        seen.add((hit[0], name))
        mod, cls = hit
        path = self.module(mod)[0]
        out = []
        for base in cls.bases:
            base_name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else (
                base.value.id if isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name) else None)
            if base_name:
                out += self.fields(mod, base_name, seen)
        for node in cls.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                repo = "NVIDIA-NeMo/Megatron-Bridge@" + BRIDGE_COMMIT[:8] if mod.startswith("megatron.bridge") else \
                    "NVIDIA/Megatron-LM@" + MEGATRON_COMMIT[:8]
                out.append((node.target.id, cls.name, f"{repo}:{path}:{node.lineno}"))
        return out


def main():
    bridge, megatron = sys.argv[1], sys.argv[2]
    out_path = sys.argv[3] if len(sys.argv) > 3 else f"libbudget/src/interop/bridge_fields_{BRIDGE_COMMIT[:8]}.tsv"
    src = Sources(bridge, megatron)
    lines = [f"# Megatron-Bridge ConfigContainer fields by section, written by scripts/bridge_fields.py from "
             f"NVIDIA-NeMo/Megatron-Bridge@{BRIDGE_COMMIT} and NVIDIA/Megatron-LM@{MEGATRON_COMMIT}. Do not edit.",
             "# section\tfield\tclass\tdeclared at"]
    for section, classes in SECTIONS.items():
        seen_fields = set()
        for module, name in classes:
            rows = src.fields(module, name)
            if not rows:
                sys.exit(f"{module}.{name}: not found")
            for field, cls, where in rows:
                if field.startswith("_") or field in seen_fields:
                    continue
                seen_fields.add(field)
                lines.append(f"{section}\t{field}\t{cls}\t{where}")
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{out_path}: {len(lines) - 2} fields")


if __name__ == "__main__":
    main()
