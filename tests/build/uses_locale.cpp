// Links libstdc++ the way each target of tests/build beside it says (shared by path, or
// through a directory that holds libstdc++.a alone); std::regex and std::locale pull in
// the parts of libstdc++ whose second copy crashed the Python module (issue 26).
#include <locale>
#include <regex>

int main(int argc, char** argv) {
  const std::regex word("[[:alpha:]_/.-]+");
  return argc > 0 && std::regex_match(argv[0], word) && std::isalpha('a', std::locale()) ? 0 : 1;
}
