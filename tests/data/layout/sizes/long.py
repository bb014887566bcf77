"""A fixture of check_sizes.py (limits 40 lines a file, 10 a function): a method over the limit, a def at it."""


def short_one(x):
    text = "def not_a_function():\n" * 20  # a def inside a string is not a function
    return text, x


class Holder:
    def long_method(self, x):
        total = 0
        total += x
        total += x
        total += x
        total += x
        total += x
        total += x
        total += x
        total += x
        return total


def ten_lines(x):  # at the limit: not reported
    y = x
    y += 1
    y += 1
    y += 1
    y += 1
    y += 1
    y += 1
    y += 1
    return y
