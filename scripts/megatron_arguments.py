#!/usr/bin/env python3
"""Writes the table of every Megatron-LM training argument at one commit (the names the
--megatron-args reader accepts; libbudget/src/interop/megatron_arguments_d98e8a64.tsv).

How: Megatron's own parser is built and its actions listed, so no flag is guessed. Its
add_megatron_arguments() (megatron/training/arguments.py) generates most flags from dataclasses
(ArgumentGroupFactory, megatron/training/argument_utils.py); importing it needs torch and CUDA
libraries, which are replaced here by inert stand-in modules: only argparse declarations run.
Conditional groups whose library a stand-in pretends to have (Kitchen) are kept: they are real
Megatron flags where that library is installed. Each row's source is the first line in the
checkout that declares the flag literally ('--flag') or, for a dataclass-generated flag, the
line of its field (`name:` in the config classes).

Usage: git archive <commit> megatron | tar x -C DIR; python3 scripts/megatron_arguments.py DIR COMMIT > TSV
Columns: names (aliases, space-separated) | dest | arity (0, 1, ?, +, *) | type | choices (|-separated) | source
"""
import argparse
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import types
import typing
from unittest import mock

STUBBED = ['torch', 'transformer_engine', 'einops', 'apex', 'flash_attn', 'triton', 'nvidia_resiliency_ext',
           'tensorstore', 'zarr', 'wandb', 'tensorboard', 'modelopt', 'numpy', 'packaging', 'safetensors',
           'transformers', 'tqdm', 'nvtx', 'onelogger', 'multistorageclient', 'psutil', 'sentencepiece',
           'tiktoken', 'datasets', 'flashinfer', 'mamba_ssm', 'causal_conv1d', 'emerging_optimizers', 'nemo_run',
           'torch_memory_saver', 'pynvml', 'fla', 'deep_ep', 'hybrid_ep', 'nvshmem', 'cuda', 'opentelemetry',
           'megatron_fsdp', 'msgpack', 'zmq', 'uvloop', 'aiohttp', 'fastapi', 'uvicorn', 'quart', 'hypercorn',
           'scipy', 'torchvision', 'PIL', 'sklearn', 'nltk', 'cudnn', 'nvidia', 'grpc', 'lightning', 'timm',
           'open_clip', 'kitchen', 'megatron_kitchen', 'absl']


def inert():
    m = mock.MagicMock()
    m.__lt__.return_value = False
    m.__gt__.return_value = False
    m.__le__.return_value = True
    m.__ge__.return_value = True
    return m


class AnyMeta(type(typing.Protocol)):
    """A class whose attributes are classes again: usable as a base, a decorator, a type."""

    def __getattr__(cls, k):
        if k.startswith('__') and k.endswith('__'):
            raise AttributeError(k)
        v = make_any(k)
        setattr(cls, k, v)
        return v

    def __call__(cls, *a, **kw):
        if len(a) == 1 and callable(a[0]) and not kw:
            return a[0]
        return super().__call__(*a, **kw)

    def __or__(cls, o): return cls
    def __ror__(cls, o): return cls
    def __getitem__(cls, k): return cls
    def __iter__(cls): return iter(())


def make_any(name):
    return AnyMeta(name, (object,), {'__init__': lambda s, *a, **kw: None, '__call__': lambda s, *a, **kw: inert(),
                                     '__getattr__': lambda s, n: inert(), '__iter__': lambda s: iter(()),
                                     '__len__': lambda s: 0})


class Stub(types.ModuleType):
    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []
        self.__file__ = '<stub>'

    def __getattr__(self, k):
        if k == '__version__':
            return '99.0.0'
        if k.startswith('__') and k.endswith('__'):
            raise AttributeError(k)
        v = make_any(k)
        setattr(self, k, v)
        return v


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        top = name.split('.')[0]
        if top not in STUBBED:
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec): return Stub(spec.name)
    def exec_module(self, m): pass


class Version:
    def __init__(self, s):
        self.t = tuple(int(x) for x in re.findall(r'\d+', str(s))[:3]) or (0,)
        self.major, self.minor, self.micro = (self.t + (0, 0))[:3]
        self.base_version = '.'.join(map(str, self.t))
        self.release = self.t
    def __lt__(s, o): return s.t < o.t
    def __le__(s, o): return s.t <= o.t
    def __gt__(s, o): return s.t > o.t
    def __ge__(s, o): return s.t >= o.t
    def __eq__(s, o): return s.t == o.t
    def __hash__(s): return hash(s.t)


def install_stubs():
    sys.meta_path.insert(0, StubFinder())
    typing.override = getattr(typing, 'override', lambda f: f)  # Python < 3.12
    packaging = types.ModuleType('packaging')
    packaging.__path__ = []
    version = types.ModuleType('packaging.version')
    version.Version = Version
    version.parse = Version
    version.InvalidVersion = Exception
    packaging.version = version
    sys.modules['packaging'] = packaging
    sys.modules['packaging.version'] = version
    os.environ.setdefault('TRITON_CACHE_AUTOTUNING', '1')


def arity(action):
    if action.nargs is None:
        return '1'
    if action.nargs == 0:
        return '0'
    return str(action.nargs)


def find_sources(root, rows):
    """Each flag's declaring line: a literal '--flag' in megatron/training/arguments.py, else the
    dataclass field (`dest:`) in a config file, else the first literal elsewhere in megatron/."""
    files = []
    for dirpath, _, names in os.walk(os.path.join(root, 'megatron')):
        files += [os.path.join(dirpath, n) for n in names if n.endswith('.py')]
    files.sort()
    texts = {f: open(f, encoding='utf-8').read().split('\n') for f in files}
    arguments = os.path.join(root, 'megatron/training/arguments.py')
    config_files = [f for f in files if '/config' in f or f.endswith('config.py') or f.endswith('fault_injector.py')]
    others = [f for f in files if f != arguments]

    def first(candidates, match):
        for f in candidates:
            for i, line in enumerate(texts[f]):
                if match(line):
                    return f'{os.path.relpath(f, root)}:{i + 1}'
        return ''

    for row in rows:
        literal = lambda line: any(f"'{n}'" in line or f'"{n}"' in line for n in row['names'])
        field = re.compile(r'^\s+' + re.escape(row['dest']) + r'\s*:')
        row['source'] = (first([arguments], literal) or first(config_files, field.match) or first(others, literal)
                         or first(others, field.match))


def main():
    root, commit = sys.argv[1], sys.argv[2]
    install_stubs()
    sys.path.insert(0, root)
    import logging
    logging.disable(logging.CRITICAL)
    import warnings
    warnings.simplefilter('ignore')
    from megatron.training.arguments import add_megatron_arguments
    parser = argparse.ArgumentParser(allow_abbrev=False)
    add_megatron_arguments(parser)
    rows = []
    for a in parser._actions:
        if not a.option_strings or a.dest == 'help':
            continue
        t = a.type.__name__ if isinstance(a.type, type) else ('callable' if a.type else '')
        if type(a).__name__ == 'BooleanOptionalAction':
            t = ''
        choices = '|'.join(str(getattr(c, 'name', c)) for c in a.choices) if a.choices else ''
        rows.append({'names': list(a.option_strings), 'dest': a.dest, 'arity': arity(a), 'type': t,
                     'choices': choices})
    find_sources(root, rows)
    print(f'# Megatron-LM training arguments at {commit} (scripts/megatron_arguments.py); {len(rows)} arguments')
    print('# names\tdest\tarity\ttype\tchoices\tsource')
    for r in rows:
        print('\t'.join([' '.join(r['names']), r['dest'], r['arity'], r['type'], r['choices'], r['source']]))


if __name__ == '__main__':
    main()
