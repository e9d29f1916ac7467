/* output_units.c — units.csv (see output_units.h). The units are those the files are written
 * in: SI throughout. */
#include "output_units.h"
#include <stdio.h>

static void row(srd_outfile *o, const char *file, const char *column, const char *suffix, const char *unit)
{
    srd_outfile_printf(o, "%s,%s%s,%s\n", file, column, suffix, unit);
}

/* A probe of a DOF or a node: lengths, or an angle for a twist or a mid-edge rotation. */
static void state_probe(srd_outfile *o, const char *file, const srd_model *m, const srd_probe *p)
{
    if (p->dof < 0) {
        row(o, file, p->name, ".x", "m");
        row(o, file, p->name, ".y", "m");
        row(o, file, p->name, ".z", "m");
        return;
    }
    int kind = m->dof_kind[p->dof];
    row(o, file, p->name, "", kind == SRD_DOF_TWIST || kind == SRD_DOF_XI ? "rad" : "m");
}

/* Units of body and joint probes; a motor's effort is a torque (revolute) or a force. */
static void body_probe_rows(srd_outfile *o, const char *file, const srd_model *m, const srd_probe *p)
{
    static const char *xyz[] = { ".x", ".y", ".z" };
    if (p->kind == SRD_PROBE_JOINT && p->component == SRD_JOINT_MOTOR) {
        row(o, file, p->name, "", m->joints[p->target].type == SRD_JOINT_REVOLUTE ? "N m" : "N");
        return;
    }
    const char *unit = p->kind == SRD_PROBE_JOINT ? (p->component == SRD_JOINT_FORCE ? "N" : "N m")
                     : p->component == SRD_BODY_MOMENTUM ? "kg m^2/s" : p->component == SRD_BODY_OMEGA ? "1/s" : "1";
    for (int c = 0; c < 3; c++)
        row(o, file, p->name, xyz[c], unit);
}

static void probe_rows(srd_outfile *o, const char *file, const srd_model *m, const srd_analysis *a)
{
    static const char *force[] = { ".fx", ".fy", ".fz" }, *moment[] = { ".mx", ".my", ".mz" };
    row(o, file, a == &m->modes ? "mode" : "t", "", a == &m->modes ? "1" : "s");
    for (int i = 0; i < a->n_probes; i++) {
        const srd_probe *p = &a->probes[i];
        if (p->kind == SRD_PROBE_STATE) {
            state_probe(o, file, m, p);
            continue;
        }
        if (p->kind == SRD_PROBE_BODY || p->kind == SRD_PROBE_JOINT) {
            body_probe_rows(o, file, m, p);
            continue;
        }
        for (int c = 0; c < 3; c++)
            row(o, file, p->name, force[c], "N");
        for (int c = 0; c < 3 && p->kind == SRD_PROBE_REACTION; c++)
            row(o, file, p->name, moment[c], "N m");
    }
}

int srd_units_write(srd_outfile *o, const char *dir, const srd_model *m, const bool runs[3])
{
    static const char *probe_files[] = { "static_probes.csv", "modes_probes.csv", "probes.csv" };
    const srd_analysis *analyses[] = { &m->statics, &m->modes, &m->simulate };
    if (srd_make_dirs(dir) != 0 || srd_outfile_open(o, dir, "units.csv") != 0)
        return -1;
    srd_outfile_printf(o, "file,column,unit\n");
    for (int k = 0; k < 3; k++)
        if (runs[k] && analyses[k]->n_probes)
            probe_rows(o, probe_files[k], m, analyses[k]);
    if (runs[2]) {
        static const char *energies[] = { "t", "kinetic", "potential", "total" };
        for (int k = 0; k < 4; k++)
            row(o, "energy.csv", energies[k], "", k ? "J" : "s");
    }
    if (runs[1]) {
        row(o, "modes.csv", "mode", "", "1");
        row(o, "modes.csv", "frequency_hz", "", "Hz");
    }
    return srd_outfile_close(o);
}
