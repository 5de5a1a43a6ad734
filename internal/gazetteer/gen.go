//go:build ignore

// gen writes cities15000.tsv.gz from a GeoNames cities dump (cities500.txt,
// cities1000.txt or cities15000.txt, tab-separated, GeoNames' documented
// columns): every populated place of at least 15,000 inhabitants (GeoNames' own
// cities15000 selection) that is a town of its own. See README.md for where the input
// came from.
//
//	go run gen.go -in /path/to/cities500.txt
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
)

// GeoNames dump columns.
const (
	colName       = 1
	colASCIIName  = 2
	colLat        = 4
	colLng        = 5
	colFeature    = 7
	colCountry    = 8
	colAdmin1     = 10
	colPopulation = 14
	colTimezone   = 17
)

// skippedFeatures are places that are not a town of their own: sections
// of a city (a Berlin point is in Berlin, not in "Mitte") and places that
// no longer exist.
var skippedFeatures = map[string]bool{"PPLX": true, "PPLH": true, "PPLQ": true, "PPLW": true}

func main() {
	in := flag.String("in", "", "GeoNames cities dump (tab-separated)")
	out := flag.String("out", "cities15000.tsv.gz", "output file")
	minPop := flag.Int("min-population", 15000, "smallest population kept")
	admin1 := flag.String("admin1", "", "GeoNames admin1CodesASCII.txt (tab-separated), or a JSON array of {code, name}")
	flag.Parse()
	regions, err := readAdmin1(*admin1)
	if err != nil {
		log.Fatal(err)
	}
	if err := run(*in, *out, *minPop, regions); err != nil {
		log.Fatal(err)
	}
}

// readAdmin1 maps "CC.code" to the region's name; no file, no names.
func readAdmin1(path string) (map[string]string, error) {
	names := map[string]string{}
	if path == "" {
		return names, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".json") {
		var list []struct{ Code, Name string }
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		for _, r := range list {
			names[r.Code] = r.Name
		}
		return names, nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, "\t"); len(f) >= 2 {
			names[f[0]] = f[1]
		}
	}
	return names, nil
}

func run(in, out string, minPop int, regions map[string]string) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(out)
	if err != nil {
		return err
	}
	defer dst.Close()
	zw, err := gzip.NewWriterLevel(dst, gzip.BestCompression)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(zw)
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) <= colTimezone {
			continue
		}
		if skippedFeatures[f[colFeature]] {
			continue
		}
		pop, err := strconv.Atoi(f[colPopulation])
		if err != nil || pop < minPop {
			continue
		}
		lat, errLat := strconv.ParseFloat(f[colLat], 64)
		lng, errLng := strconv.ParseFloat(f[colLng], 64)
		if errLat != nil || errLng != nil {
			continue
		}
		ascii := f[colASCIIName]
		if ascii == f[colName] {
			ascii = ""
		}
		region := regions[f[colCountry]+"."+f[colAdmin1]]
		fmt.Fprintf(w, "%s\t%s\t%s\t%.4f\t%.4f\t%s\t%d\t%s\n", f[colName], ascii, f[colCountry], lat, lng, f[colTimezone], pop, region)
		n++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	log.Printf("wrote %d places to %s", n, out)
	return nil
}
