// What the htsim harnesses share: the process's CPU time, and reading their
// "-name value" options.
#pragma once

#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>

inline double cpu_now() {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// The command line as "-name value" pairs: option() reads the next name,
// value() its value, exiting with status 2 and the option's name when it has
// none.
class Options {
public:
    Options(int argc, char** argv) : _argc(argc), _argv(argv) {}
    bool more() const { return _i + 1 < _argc; }
    const std::string& option() {
        _name = _argv[++_i];
        return _name;
    }
    const char* value() {
        if (_i + 1 >= _argc) {
            std::cerr << "missing value for " << _name << std::endl;
            exit(2);
        }
        return _argv[++_i];
    }
    int unknown() const {
        std::cerr << "unknown option " << _name << std::endl;
        return 2;
    }

private:
    int _argc;
    char** _argv;
    int _i = 0;
    std::string _name;
};
