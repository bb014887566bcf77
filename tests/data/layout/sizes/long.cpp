// Fixture for scripts/check_sizes.py (tests/CMakeLists.txt, layout.sizes_refuses_long), checked
// with --max-file 40 --max-function 10: long_one and Widget::member are too long, the file too;
// short_one and raw_text are not (braces in literals, comments and raw strings do not count: { { {).
#include <string>

namespace fixture {

int short_one(int x) {
  const char* s = "}}}{{{";
  const char c = '}';
  /* } } } */
  return x + s[0] + c;
}

std::string raw_text() {
  return R"(
}
}
)";
}

struct Widget {
  int member(int a) const {
    int b = a;
    b += 1;
    b += 2;
    b += 3;
    b += 4;
    b += 5;
    b += 6;
    b += 7;
    b += 8;
    b += 9;
    return b;
  }
};

int long_one(int x) {
  int y = x;
  y *= 2;
  y *= 3;
  y *= 4;
  y *= 5;
  y *= 6;
  y *= 7;
  y *= 8;
  y *= 9;
  y *= 10;
  y *= 11;
  return y;
}

}  // namespace fixture
