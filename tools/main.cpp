#include "tools/cli.hpp"

int main(int argc, char** argv) { return rsim::cli::main(argc, argv); }
