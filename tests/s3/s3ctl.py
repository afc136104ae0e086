"""boto3 on the test server, for tests/s3/s3.sh (run with the venv-s3 python):
    s3ctl.py ENDPOINT mb BUCKET                  make a bucket
    s3ctl.py ENDPOINT ls BUCKET [PREFIX]         keys and sizes, one "key size" a line
    s3ctl.py ENDPOINT get BUCKET KEY FILE        an object into FILE
    s3ctl.py ENDPOINT put BUCKET KEY FILE        FILE as an object
    s3ctl.py ENDPOINT putdir BUCKET PREFIX DIR   every file of DIR under PREFIX/
    s3ctl.py ENDPOINT uploads BUCKET             multipart uploads in progress, one key a line
    s3ctl.py ENDPOINT user NAME                  an IAM user with S3 rights: "ID SECRET"
Credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, as feedbench reads them."""
import os
import sys

import boto3
import botocore.config


def client(endpoint, service="s3"):
    cfg = botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1", config=cfg)


def main():
    ep, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    s3 = client(ep)
    if cmd == "mb":
        s3.create_bucket(Bucket=args[0])
    elif cmd == "ls":
        pages = s3.get_paginator("list_objects_v2").paginate(
            Bucket=args[0], Prefix=args[1] if len(args) > 1 else "")
        for page in pages:
            for o in page.get("Contents", []):
                print(o["Key"], o["Size"])
    elif cmd == "get":
        with open(args[2], "wb") as f:
            f.write(s3.get_object(Bucket=args[0], Key=args[1])["Body"].read())
    elif cmd == "put":
        with open(args[2], "rb") as f:
            s3.put_object(Bucket=args[0], Key=args[1], Body=f.read())
    elif cmd == "putdir":
        for name in sorted(os.listdir(args[2])):
            with open(os.path.join(args[2], name), "rb") as f:
                s3.put_object(Bucket=args[0], Key=args[1] + "/" + name, Body=f.read())
    elif cmd == "uploads":
        for u in s3.list_multipart_uploads(Bucket=args[0]).get("Uploads", []):
            print(u["Key"])
    elif cmd == "user":
        iam = client(ep, "iam")
        iam.create_user(UserName=args[0])
        pol = ('{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*",'
               '"Resource":"*"}]}')
        arn = iam.create_policy(PolicyName=args[0] + "-s3", PolicyDocument=pol)["Policy"]["Arn"]
        iam.attach_user_policy(UserName=args[0], PolicyArn=arn)
        k = iam.create_access_key(UserName=args[0])["AccessKey"]
        print(k["AccessKeyId"], k["SecretAccessKey"])
    else:
        sys.exit("unknown command " + cmd)


main()
